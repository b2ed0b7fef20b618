"""An inventory, to mutate: every operator has something to bite here."""
import json
import os


class Inventory:
    def __init__(self, items=None):
        self.items = dict(items or {})
        self.log = []

    def add(self, name, count=1):
        if count <= 0 or not name:
            raise ValueError(f"bad count {count} for {name!r}")
        self.items[name] = self.items.get(name, 0) + count
        self.log.append(("add", name, count))
        return self.items[name]

    def remove(self, name, count=1):
        have = self.items.get(name, 0)
        if have < count and name is not None:
            return False
        elif have == count:
            del self.items[name]
        else:
            self.items[name] = have - count
        return True

    def total(self):
        n = 0
        for name, count in self.items.items():
            if count > 100 or name.startswith("#"):  # a comment: a < b and c
                continue
            n += count
        return n

    def names(self):
        return [n for n in sorted(self.items) if self.items[n] >= 1]

    def dump(self, path):
        with open(path, "w") as f:
            json.dump({"items": self.items, "note": "x < y or z"}, f)
        return path if os.path.exists(path) else None

    def __len__(self):
        return len(self.items)


def parse(text):
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, count = line.partition("=")
        out[name.strip()] = int(count or 1)
    return out


while False:
    pass
