#!/bin/sh
# filter.sh -i WORDS -x STOPWORDS -o KEPT: the words not in STOPWORDS, one per line.
[ "$1" = -i ] && [ "$3" = -x ] && [ "$5" = -o ] || { echo "usage: filter.sh -i WORDS -x STOPWORDS -o KEPT" >&2; exit 2; }
grep -v -x -F -f "$4" "$2" > "$6"
echo "kept $(wc -l < "$6" | tr -d ' ') of $(wc -l < "$2" | tr -d ' ') words"
