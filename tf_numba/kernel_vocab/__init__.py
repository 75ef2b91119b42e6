"""The lowering vocabulary: the records in which a primitive states how it lowers
(``rules.py``) and how scalar values are written in generated code (``scalar_exprs.py``).

It sits below ``ops``, which states each primitive's lowering with these words, and below
the compiler (``lowering/``), which reads them; as JAX keeps ``interpreters/`` below
``lax/``. It imports only ``core``.
"""
