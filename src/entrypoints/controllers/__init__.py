"""Thin HTTP controllers: parse, call a use case, return its struct.

Beside the route handlers live what only they use: ``params`` (the documented parameters),
``use_cases`` (the use cases as Litestar dependencies), ``lean_parameters`` and
``lean_signature`` (how a route's declared parameters are read), so a route reads whole from
this one folder.
"""
