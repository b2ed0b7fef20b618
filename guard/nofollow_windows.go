package guard

// ONoFollow: Windows has no O_NOFOLLOW (and runs no loop).
const ONoFollow = 0
