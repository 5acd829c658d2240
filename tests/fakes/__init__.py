"""Fakes shared by the tests: seats that play well or misbehave in one precise way."""
