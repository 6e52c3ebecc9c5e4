"""The handlers, thin: each decodes an update, takes the chat's lock and calls the tables' room:
commands anywhere (``account``), a chat's settings (``chat_settings``), the books (``records``), the
table's commands and buttons (``table``), the door every update passes first (``gate``), and what
they all need (``common``)."""
