endpoints = []
