'use strict';
// An inventory, to mutate: every operator has something to bite here.
const fs = require('fs');

class Inventory {
  constructor(items) {
    this.items = new Map(Object.entries(items || {}));
    this.log = [];
  }

  add(name, count = 1) {
    if (count <= 0 || !name) {
      throw new Error(`bad count ${count} for ${name}`);
    }
    this.items.set(name, (this.items.get(name) || 0) + count);
    this.log.push(['add', name, count]);
    return this.items.get(name);
  }

  remove(name, count = 1) {
    const have = this.items.get(name) || 0;
    if (have < count && name !== null) {
      return false;
    } else if (have === count) {
      this.items.delete(name);
    } else {
      this.items.set(name, have - count);
    }
    return true;
  }

  total() {
    let n = 0;
    for (const [name, count] of this.items) {
      if (count > 100 || name.startsWith('#')) continue; // a < b && c
      n += count;
    }
    return n;
  }

  names() {
    return [...this.items.keys()].filter((n) => this.items.get(n) >= 1).sort();
  }

  dump(path) {
    fs.writeFileSync(path, JSON.stringify({ items: [...this.items], note: 'x < y || z' }));
    return fs.existsSync(path) ? path : null;
  }
}

function parse(text) {
  const out = {};
  for (let line of text.split(/\r?\n/)) {
    line = line.trim();
    if (!line || line.startsWith('#')) continue;
    const [name, count] = line.split('=');
    out[name.trim()] = parseInt(count || '1', 10);
  }
  return out;
}

let i = 0;
while (i < 3) i++;

module.exports = { Inventory, parse };
