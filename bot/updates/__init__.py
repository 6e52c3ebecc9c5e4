"""Updates in, before any handler: whether the bot hears them and the polling that does
(``hearing``), and each update handled once however often Telegram delivers it (``seen``)."""
