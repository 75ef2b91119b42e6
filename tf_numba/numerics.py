"""Numbers the interpreter and the generated kernels share: tables and functions of
NumPy alone, so that a compile worker, which imports only the modules its kernels call
(``lowering.loops``, ``lowering.threefry``), does without the primitives' modules."""
import numpy as np

# Giles 2010, "Approximating the erfinv function" (GPU Computing Gems), the approximation
# XLA's erf_inv uses: per dtype, ranges ``(bound, shift, coefficients)``; the first is a
# polynomial in ``w - shift`` for ``w = -log(1 - x**2) < bound``, the others in
# ``sqrt(w) - shift``. float32 within 2.2 ulp of SciPy's erfinv, float64 within 3.4
# (measured on 2e6 uniform points and 1e4 near +-1).
ERF_INV = {
    np.dtype(np.float32): (
        (5.0, 2.5, (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                    0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)),
        (np.inf, 3.0, (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                       0.00573950773, -0.0076224613, 0.00943887047, 1.00167406,
                       2.83297682))),
    np.dtype(np.float64): (
        (6.25, 3.125, (-3.6444120640178196996e-21, -1.685059138182016589e-19,
                       1.2858480715256400167e-18, 1.115787767802518096e-17,
                       -1.333171662854620906e-16, 2.0972767875968561637e-17,
                       6.6376381343583238325e-15, -4.0545662729752068639e-14,
                       -8.1519341976054721522e-14, 2.6335093153082322977e-12,
                       -1.2975133253453532498e-11, -5.4154120542946279317e-11,
                       1.051212273321532285e-09, -4.1126339803469836976e-09,
                       -2.9070369957882005086e-08, 4.2347877827932403518e-07,
                       -1.3654692000834678645e-06, -1.3882523362786468719e-05,
                       0.0001867342080340571352, -0.00074070253416626697512,
                       -0.0060336708714301490533, 0.24015818242558961693,
                       1.6536545626831027356)),
        (16.0, 3.25, (2.2137376921775787049e-09, 9.0756561938885390979e-08,
                      -2.7517406297064545428e-07, 1.8239629214389227755e-08,
                      1.5027403968909827627e-06, -4.013867526981545969e-06,
                      2.9234449089955446044e-06, 1.2475304481671778723e-05,
                      -4.7318229009055733981e-05, 6.8284851459573175448e-05,
                      2.4031110387097893999e-05, -0.0003550375203628474796,
                      0.00095328937973738049703, -0.0016882755560235047313,
                      0.0024914420961078508066, -0.0037512085075692412107,
                      0.005370914553590063617, 1.0052589676941592334,
                      3.0838856104922207635)),
        (np.inf, 5.0, (-2.7109920616438573243e-11, -2.5556418169965252055e-10,
                       1.5076572693500548083e-09, -3.7894654401267369937e-09,
                       7.6157012080783393804e-09, -1.4960026627149240478e-08,
                       2.9147953450901080826e-08, -6.7711997758452339498e-08,
                       2.2900482228026654717e-07, -9.9298272942317002539e-07,
                       4.5260625972231537039e-06, -1.9681778105531670567e-05,
                       7.5995277030017761139e-05, -0.00021503011930044477347,
                       -0.00013871931833623122026, 1.0103004648645343977,
                       4.8499064014085844221))),
}


# Salmon et al. 2011, "Parallel random numbers: as easy as 1, 2, 3", Threefry-2x32-20,
# in the schedule of JAX's ``_threefry2x32_lowering``.
ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
PARITY = 0x1BD11BDA


def threefry2x32_words(k0, k1, x0, x1):
    """The cipher of uint32 words (NumPy arrays or numba scalars): ``(y0, y1)``."""
    ks = (k0, k1, np.uint32(k0 ^ k1 ^ np.uint32(PARITY)))
    x0, x1 = np.uint32(x0 + ks[0]), np.uint32(x1 + ks[1])
    for block in range(5):
        for r in ROTATIONS[block % 2]:
            x0 = np.uint32(x0 + x1)
            x1 = np.uint32(x0 ^ np.uint32((x1 << np.uint32(r)) | (x1 >> np.uint32(32 - r))))
        x0 = np.uint32(x0 + ks[(block + 1) % 3])
        x1 = np.uint32(x1 + ks[(block + 2) % 3] + np.uint32(block + 1))
    return x0, x1


def pack(y0, y1):
    """Two uint32 words as one int64, ``y0`` in the high half (NumPy or numba)."""
    return np.int64((np.uint64(y0) << np.uint64(32)) | np.uint64(y1))
