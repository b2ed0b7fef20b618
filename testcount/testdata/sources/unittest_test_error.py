import unittest

from calc import parse


class TestParse(unittest.TestCase):
    def test_ok(self):
        self.assertEqual(parse("1")["value"], 1)

    def test_dict(self):
        self.assertEqual(parse("2"), {"value": 2, "unit": "km", "tags": ["a", "b", "c"]})

    def test_raises(self):
        with self.assertRaises(ValueError):
            parse("bad")

    def test_error(self):
        parse("x")

    @unittest.skip("later")
    def test_skip(self):
        pass

    def test_sub(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertLess(i, 2)
