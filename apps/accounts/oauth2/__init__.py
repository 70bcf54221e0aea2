"""OAuth2 sign-in: providers, the flow, state, hand-off, account takeover checks."""
