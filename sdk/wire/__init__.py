"""Every conversion between the protocol's messages and the domain's types, in one place."""
