"""What is shown, in each language: the game kinds (``game_kinds``: what differs between the games),
the views (``views/``: texts and keyboards, the Mini App's JSON), the translations (``i18n``, with
``locales/``), and the presenter that turns a table into the messages it should show
(``presenter``)."""
