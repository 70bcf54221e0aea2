"""Domain rules shared by the apps: permissions, queries, IDs, events, mail, lists, time and IP formats."""
