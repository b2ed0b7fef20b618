import unittest
class T(unittest.TestCase):
    def test_a(self): pass
    @unittest.skip("x")
    def test_b(self): pass
