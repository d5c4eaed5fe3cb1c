# usage: probe NAME <<EOF body
