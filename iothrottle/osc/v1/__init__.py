"""Commands of API version 1."""
