"""The HTTP side: the server (``server``: webhook, Mini App, ``/healthz``, ``/metrics``), the webhook
(``webhook``), the Mini App (``miniapp/``), the sandbox (``sandbox/``: the bot against the fake
Telegram in a browser), the open files connections may take (``open_files``), and refused requests
logged at a bounded rate (``refusal_log``)."""
