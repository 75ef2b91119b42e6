"""Calls from compiled code into C functions found at run time, by a symbol name.

A numba function that calls a ctypes function bakes its address into the machine code, so
numba will not cache it; calling through ctypes from Python costs ~0.5 us a call. An
intrinsic from ``calling`` instead refers to the function by a symbol name, which LLVM
resolves (``llvmlite.binding.add_symbol``) when the caller is compiled or loaded from
numba's cache: the caller caches, and a call costs what a C call costs. The symbol must be
registered before anything that calls it is compiled or loaded.
"""
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

# numba type -> LLVM type of the C argument or result (ints narrower than int64 are
# widened to int64 on the numba side)
_C_TYPES = {"int": ir.IntType(32), "void": ir.VoidType()}


def calling(symbol, result="int", arguments=("int",)):
    """An intrinsic calling ``result symbol(arguments...)``: C ``int`` arguments are
    taken as int64 and narrowed, an ``int`` result widened to int64; ``void`` returns
    none (numba sees None)."""
    c_result = _C_TYPES[result]
    c_arguments = [_C_TYPES[a] for a in arguments]
    numba_result = types.none if result == "void" else types.int64

    def typed(typingctx, *args):
        def codegen(context, builder, signature, values):
            fn = cgutils.get_or_insert_function(builder.module,
                                                ir.FunctionType(c_result, c_arguments),
                                                symbol)
            out = builder.call(fn, [builder.trunc(v, t) for v, t in zip(values, c_arguments)])
            if result == "void":
                return context.get_dummy_value()
            return builder.sext(out, ir.IntType(64))
        return numba_result(*[types.int64] * len(arguments)), codegen

    # numba reads an intrinsic's parameters off its definition: no *args
    call = {0: lambda typingctx: typed(typingctx),
            1: lambda typingctx, a: typed(typingctx, a),
            2: lambda typingctx, a, b: typed(typingctx, a, b)}[len(arguments)]
    call.__name__ = symbol
    return intrinsic(call)
