"""Who is calling: resolving credentials (authn) and session tokens/JWTs (tokens)."""
