#!/bin/sh
# stdin → stdout, lower-cased.
tr 'A-Z' 'a-z'
