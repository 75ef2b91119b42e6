"""tf.debug.print: values printed when the program runs, under every transform."""
import numpy as np

import tf_numba as tf
import tf_numba.numpy as tnp


def _noisy(x):
    tf.debug.print("x={} total={t}", x, t=tnp.sum(x))
    return tnp.sum(x ** 2)


def test_prints_eagerly_with_the_values(capsys):
    assert _noisy(np.arange(3.0)) == 5.0
    assert capsys.readouterr().out == "x=[0. 1. 2.] total=3.0\n"


def test_prints_on_every_jitted_call_with_that_calls_values(capsys):
    f = tf.jit(_noisy, tiered=False)
    f(np.arange(3.0))
    f(np.arange(3.0) + 1)
    assert capsys.readouterr().out == "x=[0. 1. 2.] total=3.0\nx=[1. 2. 3.] total=6.0\n"
    assert "debug_callback" in str(tf.make_program(_noisy)(np.ones(3)))


def test_prints_primals_under_grad_and_batched_values_under_vmap(capsys):
    np.testing.assert_array_equal(tf.grad(_noisy)(np.arange(3.0)), [0.0, 2.0, 4.0])
    assert capsys.readouterr().out == "x=[0. 1. 2.] total=3.0\n"
    np.testing.assert_array_equal(tf.vmap(_noisy)(np.ones((2, 2))), [2.0, 2.0])
    assert capsys.readouterr().out == "x=[[1. 1.]\n [1. 1.]] total=[2. 2.]\n"


def test_two_identical_prints_both_print_and_an_unused_one_is_kept(capsys):
    def twice(x):
        tf.debug.print("v {}", x)
        tf.debug.print("v {}", x)
        return x * 2
    tf.jit(twice, tiered=False)(np.array(1.5))
    assert capsys.readouterr().out == "v 1.5\nv 1.5\n"


def test_callback_sees_the_values_eagerly_under_jit_grad_and_vmap():
    seen = []

    def f(x):
        tf.debug.callback(lambda v, scale: seen.append(v * scale), x, scale=2.0)
        return tnp.sum(x ** 2)
    f(np.ones(2))
    tf.jit(f, tiered=False)(np.arange(2.0))
    tf.grad(f)(np.full(2, 3.0))
    tf.vmap(f)(np.ones((2, 2)))
    expected = [np.full(2, 2.0), np.arange(2.0) * 2, np.full(2, 6.0), np.full((2, 2), 2.0)]
    assert len(seen) == len(expected)
    for got, want in zip(seen, expected):
        np.testing.assert_array_equal(got, want)


def test_log_goes_through_the_logger(caplog):
    import logging
    with caplog.at_level(logging.INFO, logger="tf_numba.debug"):
        tf.jit(lambda x: (tf.debug.log("x is {}", x), x)[1], tiered=False)(np.array(2.5))
    assert "x is 2.5" in caplog.text
