#!/bin/sh
# slugify.sh TEXT: prints TEXT as a URL slug: lower case, words joined by "-",
# nothing but a-z, 0-9 and "-".
printf '%s\n' "$1" | tr ' ' '-'
