("{" @open "}" @close)
("(" @open ")" @close)
("[" @open "]" @close)
