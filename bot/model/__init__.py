"""The bot's own values every room shares: a table as the bot holds it (``live_table``) and what a
button's data says (``callbacks``)."""
