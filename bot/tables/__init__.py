"""The open tables and what happens to them: the runtime that holds them (``runtime``), each
change applied and saved (``open_tables``), acting by any way (``acting``), each table's turn clock
(``turn_clock``), escapes asked for twice (``escapes``), what chats and people chose
(``preferences``), what the bot does when a chat changes under a table (``chat_events``), and
between rounds an all-in's cards dealt one by one (``reveals``) and the pause before auto-ready
(``breath``), each a moment of the table's on the JobQueue (``moments``)."""
