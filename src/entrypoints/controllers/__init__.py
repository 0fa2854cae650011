"""Thin HTTP controllers: parse, call a use case, return its struct.

Beside the route handlers live what only they use: ``params`` (the documented parameters)
and ``use_cases`` (the use cases as Litestar dependencies), so a route reads whole from
this one folder.
"""
