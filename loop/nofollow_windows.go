package loop

// oNoFollow: Windows has no O_NOFOLLOW (and runs no loop).
const oNoFollow = 0
