import unittest

class TestA(unittest.TestCase):
    def test_pass(self):
        pass
    def test_fail(self):
        self.assertEqual(1, 2)
    @unittest.skip("not today")
    def test_skip(self):
        pass
    def test_error(self):
        raise RuntimeError("bad")
    @unittest.expectedFailure
    def test_xfail(self):
        self.assertTrue(False)
    def test_doc(self):
        """A test with a docstring."""
        pass

class TestB(unittest.TestCase):
    def test_other(self):
        pass
