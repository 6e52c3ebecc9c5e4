"""What goes out to Telegram, and when: the messages as values (``messages``), the rate policy
(``rate_policy``: Telegram's limits, one lane a chat), the sender that drives it (``sender``), the
courier that sends a parcel and reads the answer (``courier``), the tables whose messages it keeps
up (``kept_tables``), replies (``replies``), DM messages whose id was lost (``orphans``), the Bot
API call (``raw``) over aiohttp (``aiohttp_request``), and every fact of Telegram's the bot relies
on (``telegram_facts``)."""
