"""Texts and keyboards, pure functions of a table and a language: what both games share
(``common``, ``lobby``, ``acted``), each game's table message and DM (``muxi``, ``showhand``,
``showdown``), ``/rules`` (``rules``), and the Mini App's JSON (``app``, ``muxi_app``,
``showhand_app``)."""
