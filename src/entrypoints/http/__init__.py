"""The HTTP application: ``create_app`` (``app``) and the layers around the controllers:
request context and timing, the guards that refuse before any parameter is parsed (rate
limit, auth, limits), HTTP caching, the error table and bodies, and the OpenAPI document."""
