"""OpenAPI schemas of the served kinds, the documents kube-apiserver publishes, strict field validation.

- :mod:`.builders`   compact constructors of schemas
- :mod:`.meta`, :mod:`.core`, :mod:`.capi`, :mod:`.capo`   the schemas, written from the API references
- :mod:`.catalog`    every schema by (group, version, kind)
- :mod:`.documents`  ``/openapi/v2`` and ``/openapi/v3`` documents (pure)
- :mod:`.validation` unknown fields, and the answers of ``fieldValidation`` Strict and Warn
- :mod:`.routes`     :func:`register` adds the OpenAPI paths to the Flask app
"""

from minicloud.kube.openapi.routes import register
from minicloud.kube.openapi.validation import check_fields, strict_error, unknown_fields, warning_headers

__all__ = ["check_fields", "register", "strict_error", "unknown_fields", "warning_headers"]
