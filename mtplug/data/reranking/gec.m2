S we goed to the city in night .
A 1 2|||Vform|||went|||REQUIRED|||-NONE-|||0
A 5 6|||Prep|||at|||REQUIRED|||-NONE-|||0

S he goes to school with childs .
A 5 5|||ArtOrDet|||the|||REQUIRED|||-NONE-|||0
A 5 6|||Nn|||children|||REQUIRED|||-NONE-|||0

S he has two book on his bag .
A 3 4|||Nn|||books|||REQUIRED|||-NONE-|||0
A 4 5|||Prep|||in|||REQUIRED|||-NONE-|||0

S we goed to the city at night .
A 1 2|||Vform|||went|||REQUIRED|||-NONE-|||0

S childs was happy in the garden .
A 0 0|||ArtOrDet|||the|||REQUIRED|||-NONE-|||0
A 0 1|||Nn|||children|||REQUIRED|||-NONE-|||0

S they went for the river at noon .
A 2 3|||Prep|||to|||REQUIRED|||-NONE-|||0

S this book are about history of the city .
A 2 3|||SVA|||is|||REQUIRED|||-NONE-|||0
A 4 4|||ArtOrDet|||the|||REQUIRED|||-NONE-|||0

S weather are nice today .
A 0 0|||ArtOrDet|||the|||REQUIRED|||-NONE-|||0
A 1 2|||SVA|||is|||REQUIRED|||-NONE-|||0

S the children was happy in garden .
A 5 5|||ArtOrDet|||the|||REQUIRED|||-NONE-|||0

S we went for the city in night .
A 2 3|||Prep|||to|||REQUIRED|||-NONE-|||0
A 5 6|||Prep|||at|||REQUIRED|||-NONE-|||0

S he goes for school with the children .
A 2 3|||Prep|||to|||REQUIRED|||-NONE-|||0

S my sister buyed red car .
A 2 3|||Vform|||bought|||REQUIRED|||-NONE-|||0
A 3 3|||ArtOrDet|||the|||REQUIRED|||-NONE-|||0

S he goes for school with the children .
A 2 3|||Prep|||to|||REQUIRED|||-NONE-|||0

S weather is nice today .
A 0 0|||ArtOrDet|||the|||REQUIRED|||-NONE-|||0

S she go to the market every morning .
A 1 2|||SVA|||goes|||REQUIRED|||-NONE-|||0

S he go to school with the childs .
A 1 2|||SVA|||goes|||REQUIRED|||-NONE-|||0
A 6 7|||Nn|||children|||REQUIRED|||-NONE-|||0

S the children were happy in garden .
A 2 3|||SVA|||was|||REQUIRED|||-NONE-|||0
A 5 5|||ArtOrDet|||the|||REQUIRED|||-NONE-|||0

S he have two book in his bag .
A 1 2|||SVA|||has|||REQUIRED|||-NONE-|||0
A 3 4|||Nn|||books|||REQUIRED|||-NONE-|||0

S he go for school with the children .
A 1 2|||SVA|||goes|||REQUIRED|||-NONE-|||0
A 2 3|||Prep|||to|||REQUIRED|||-NONE-|||0

S she go for the market every morning .
A 1 2|||SVA|||goes|||REQUIRED|||-NONE-|||0
A 2 3|||Prep|||to|||REQUIRED|||-NONE-|||0

S this book are about the history of city .
A 2 3|||SVA|||is|||REQUIRED|||-NONE-|||0
A 7 7|||ArtOrDet|||the|||REQUIRED|||-NONE-|||0

S he goes to school with children .
A 5 5|||ArtOrDet|||the|||REQUIRED|||-NONE-|||0

S my sister buyed the red car .
A 2 3|||Vform|||bought|||REQUIRED|||-NONE-|||0

S they went for river at noon .
A 2 3|||Prep|||to|||REQUIRED|||-NONE-|||0
A 3 3|||ArtOrDet|||the|||REQUIRED|||-NONE-|||0

S weather are nice today .
A 0 0|||ArtOrDet|||the|||REQUIRED|||-NONE-|||0
A 1 2|||SVA|||is|||REQUIRED|||-NONE-|||0

S weather are nice today .
A 0 0|||ArtOrDet|||the|||REQUIRED|||-NONE-|||0
A 1 2|||SVA|||is|||REQUIRED|||-NONE-|||0

S they went for river at noon .
A 2 3|||Prep|||to|||REQUIRED|||-NONE-|||0
A 3 3|||ArtOrDet|||the|||REQUIRED|||-NONE-|||0

S he have two books on his bag .
A 1 2|||SVA|||has|||REQUIRED|||-NONE-|||0
A 4 5|||Prep|||in|||REQUIRED|||-NONE-|||0

S he goes for school with children .
A 2 3|||Prep|||to|||REQUIRED|||-NONE-|||0
A 5 5|||ArtOrDet|||the|||REQUIRED|||-NONE-|||0

S he goes to school with childs .
A 5 5|||ArtOrDet|||the|||REQUIRED|||-NONE-|||0
A 5 6|||Nn|||children|||REQUIRED|||-NONE-|||0
