"""The Users service (server side, API keys): endpoints, inputs, MFA routes."""
