S Our baseline system feeds word into PB-SMT pipeline .
A 4 5|||ArtOrDet|||a word|||REQUIRED|||-NONE-|||0
A 4 5|||Nn|||words|||REQUIRED|||-NONE-|||1

S He go go to school .
A 2 3|||Rloc-||||||REQUIRED|||-NONE-|||0
A 1 2|||Vform|||goes|||REQUIRED|||-NONE-|||0
A 1 3|||Vform|||goes|||REQUIRED|||-NONE-|||1

S The cat sat on mat .
A 4 4|||ArtOrDet|||the|||REQUIRED|||-NONE-|||0
A 4 4|||ArtOrDet|||the|||REQUIRED|||-NONE-|||0
A 4 4|||ArtOrDet|||The|||REQUIRED|||-NONE-|||1
A 0 1|||Mec|||the|||REQUIRED|||-NONE-|||1

S This is fine .
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||0
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||1

S  Double  spaced   source .
A 1 2|||Mec|||double|||REQUIRED|||-NONE-|||0

S I like applepie .
A 2 3|||Spell|||apple pie|||REQUIRED|||-NONE-|||0

S Short .

S Der Apfel ist GRÜN .
A 3 4|||Mec|||grün|||REQUIRED|||-NONE-|||0

