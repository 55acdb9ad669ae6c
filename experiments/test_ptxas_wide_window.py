"""ptxas on the wide-window scan (experiments/scan_async_wide.cu) without a GPU: a 16-word
look-back window per lane spills at the 64-register cap and 8 words do not, which is why
experiments/tune_scan_wide.py tries windows of at most 8 words. The source is built by its
absolute path, as an experiment's or a plugin's is, so this also checks that it finds
kernels/scan_async.cu through primbench's include path."""

from primbench.build import ptxas_usage

from experiments.scan_forms import WIDE_SOURCE, _wide_name


def test_a_16_word_window_spills_and_8_words_do_not():
    spilling, fitting = (_wide_name("int", 4, 3, words, 0) for words in (16, 8))
    usage, _log = ptxas_usage(WIDE_SOURCE, [spilling, fitting], "sm_90")
    assert usage[spilling].spilled > 0 and usage[spilling].registers <= 64
    assert usage[fitting].spilled == 0 and usage[fitting].stack_bytes == 0
