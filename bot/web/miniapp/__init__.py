"""The table as a Telegram Mini App: the page, who is asking (``auth``), what they may see
(``view``), live updates (``hub``) and the HTTP routes (``routes``)."""
