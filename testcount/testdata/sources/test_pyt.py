import pytest

def test_pass():
    pass

def test_fail():
    print("===== 500 passed in 0.01s =====")
    assert 1 == 2

@pytest.mark.skip(reason="not today")
def test_skip():
    pass

@pytest.mark.xfail(reason="known")
def test_xfail():
    assert False

@pytest.mark.parametrize("n", [1, 2])
def test_param(n):
    assert n

@pytest.fixture
def broken():
    raise RuntimeError("fixture")

def test_error(broken):
    pass
