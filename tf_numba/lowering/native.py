"""Calls from compiled code into C functions found at run time, by a symbol name.

A numba function that calls a ctypes function bakes its address into the machine code, so
numba will not cache it; calling through ctypes from Python costs ~0.5 us a call. An
intrinsic from ``calling`` instead refers to the function by a symbol name, which LLVM
resolves (``llvmlite.binding.add_symbol``) when the caller is compiled or loaded from
numba's cache: the caller caches, and a call costs what a C call costs. The symbol must be
registered before anything that calls it is compiled or loaded (``register``).
"""
import ctypes

from llvmlite import binding as llvm_binding
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

# C type name -> (LLVM type of the C argument or result, numba type on the numba side,
# how a numba value becomes the C one). C ints are taken as int64 and narrowed; a
# pointer is an address as int64 (``array.ctypes.data``).
_C_TYPES = {
    "int": (ir.IntType(32), types.int64, lambda b, v, t: b.trunc(v, t)),
    "int64": (ir.IntType(64), types.int64, lambda b, v, t: v),
    "float": (ir.FloatType(), types.float32, lambda b, v, t: v),
    "double": (ir.DoubleType(), types.float64, lambda b, v, t: v),
    "pointer": (ir.IntType(8).as_pointer(), types.int64, lambda b, v, t: b.inttoptr(v, t)),
    "void": (ir.VoidType(), types.none, None),
}


def register(symbol, function):
    """Make ``symbol`` resolve to ``function`` (a ctypes function) or, when that is None,
    to libc's ``abs``: code that calls the symbol must load even where nothing will call
    it (its callers check first)."""
    if function is None:
        function = ctypes.CDLL(None).abs
    llvm_binding.add_symbol(symbol, ctypes.cast(function, ctypes.c_void_p).value)


def calling(symbol, result="int", arguments=("int",)):
    """An intrinsic calling ``result symbol(arguments...)`` (C type names of
    ``_C_TYPES``): an ``int`` result is widened to int64, a ``double`` or ``float`` one is
    a float64 or float32; ``void`` returns none (numba sees None)."""
    c_result = _C_TYPES[result][0]
    c_arguments = [_C_TYPES[a][0] for a in arguments]
    numba_arguments = [_C_TYPES[a][1] for a in arguments]
    converts = [_C_TYPES[a][2] for a in arguments]
    numba_result = _C_TYPES[result][1]

    def typed(typingctx, *args):
        def codegen(context, builder, signature, values):
            fn = cgutils.get_or_insert_function(builder.module,
                                                ir.FunctionType(c_result, c_arguments),
                                                symbol)
            out = builder.call(fn, [convert(builder, v, t) for convert, v, t
                                    in zip(converts, values, c_arguments)])
            if result == "void":
                return context.get_dummy_value()
            return builder.sext(out, ir.IntType(64)) if result == "int" else out
        return numba_result(*numba_arguments), codegen

    # numba reads an intrinsic's parameters off its definition, so it cannot take *args:
    # the definition is written out for this arity
    names = ", ".join(f"a{i}" for i in range(len(arguments)))
    namespace = {"typed": typed}
    exec(f"def {symbol}(typingctx, {names}):\n    return typed(typingctx, {names})\n",
         namespace)
    return intrinsic(namespace[symbol])
