#!/bin/sh
# tally.sh WORDS: each word with its count, most frequent first (stdout); a note on stderr.
sort "$1" | uniq -c | sort -k1,1nr -k2 | awk '{ print $2, $1 }'
echo "tallied $1" >&2
