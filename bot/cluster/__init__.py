"""Several workers on one PostgreSQL database and one token (``workers``): each owns some chats."""
