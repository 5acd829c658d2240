"""Persistence: the database engine and tables, the migrations and the retrying writer."""
