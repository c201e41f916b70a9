S a ab a a , cat cat of
A 1 3|||T|||The|||REQUIRED|||-NONE-|||0
A 7 8|||T|||ab|||REQUIRED|||-NONE-|||0

S of a ab a cat a b . cat .
A 0 2|||T||||||REQUIRED|||-NONE-|||0
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||1

S of ab the ab a of , cat
A 6 8|||T||||||REQUIRED|||-NONE-|||0
A 1 3|||T|||the|||REQUIRED|||-NONE-|||0
A 7 7|||T|||of is|||REQUIRED|||-NONE-|||0
A 1 1|||T||||||REQUIRED|||-NONE-|||0

S , a The cat The is
A 4 6|||T|||is|||REQUIRED|||-NONE-|||0
A 0 2|||T|||The|||REQUIRED|||-NONE-|||0
A 4 5|||T|||a the|||REQUIRED|||-NONE-|||0
A 2 2|||T|||The|||REQUIRED|||-NONE-|||0

S a . of a Cat of a is
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||0

S a Cat cat The
A 3 3|||T||||||REQUIRED|||-NONE-|||0
A 1 2|||T|||Cat|||REQUIRED|||-NONE-|||0
A 2 4|||T|||the|||REQUIRED|||-NONE-|||0
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||1
A 1 3|||T|||is The|||REQUIRED|||-NONE-|||2
A 4 4|||T|||.|||REQUIRED|||-NONE-|||2
A 4 4|||T||||||REQUIRED|||-NONE-|||2
A 1 2|||T|||ab of|||REQUIRED|||-NONE-|||2

S b a b , The , Cat b a
A 4 5|||T||||||REQUIRED|||-NONE-|||0
A 6 7|||T||||||REQUIRED|||-NONE-|||0
A 2 4|||T|||a The|||REQUIRED|||-NONE-|||1
A 9 9|||T|||ab a|||REQUIRED|||-NONE-|||1

S b of .
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||0
A 3 3|||T|||, of|||REQUIRED|||-NONE-|||1
A 3 3|||T|||The .|||REQUIRED|||-NONE-|||1

S , , cat . b a ab b a
A 8 8|||T|||ab|||REQUIRED|||-NONE-|||0
A 2 3|||T|||The|||REQUIRED|||-NONE-|||0
A 6 6|||T|||a|||REQUIRED|||-NONE-|||0

S of cat a is the b the a
A 6 7|||T|||a a|||REQUIRED|||-NONE-|||0
A 3 3|||T||||||REQUIRED|||-NONE-|||0
A 2 4|||T||||||REQUIRED|||-NONE-|||0
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||1
A 4 5|||T|||the|||REQUIRED|||-NONE-|||2

S is ab a the of of , is is . a
A 9 10|||T|||The the|||REQUIRED|||-NONE-|||0
A 7 9|||T|||b The|||REQUIRED|||-NONE-|||0
A 3 5|||T||||||REQUIRED|||-NONE-|||0

S the
A 1 1|||T||||||REQUIRED|||-NONE-|||0
A 1 1|||T|||a|||REQUIRED|||-NONE-|||0
A 0 1|||T|||Cat|||REQUIRED|||-NONE-|||1
A 0 0|||T|||.|||REQUIRED|||-NONE-|||1
A 1 1|||T||||||REQUIRED|||-NONE-|||1
A 0 0|||T|||The of|||REQUIRED|||-NONE-|||2
A 1 1|||T|||b The|||REQUIRED|||-NONE-|||2

S ab . a of , of cat ,
A 5 7|||T||||||REQUIRED|||-NONE-|||0
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||1

S ab The ab
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||0

S a b b cat The of is ,
A 3 5|||T|||The .|||REQUIRED|||-NONE-|||0
A 0 0|||T||||||REQUIRED|||-NONE-|||0

S Cat b a . ab is the Cat b
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||0
A 6 7|||T|||ab|||REQUIRED|||-NONE-|||1
A 7 7|||T|||a cat|||REQUIRED|||-NONE-|||1
A 0 0|||T|||of ,|||REQUIRED|||-NONE-|||1
A 7 9|||T||||||REQUIRED|||-NONE-|||1

S b the b a . ab ,
A 0 2|||T|||b a|||REQUIRED|||-NONE-|||0
A 2 3|||T|||b|||REQUIRED|||-NONE-|||0
A 2 4|||T|||the of|||REQUIRED|||-NONE-|||0
A 6 7|||T|||a|||REQUIRED|||-NONE-|||0

S a . of ab a a the a cat of cat
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||0

S b a ab
A 2 3|||T|||The a|||REQUIRED|||-NONE-|||0
A 1 1|||T|||the|||REQUIRED|||-NONE-|||0
A 1 2|||T|||, b|||REQUIRED|||-NONE-|||0
A 1 1|||T|||.|||REQUIRED|||-NONE-|||0
A 1 3|||T|||a is|||REQUIRED|||-NONE-|||1
A 3 3|||T||||||REQUIRED|||-NONE-|||1

S ab
A 0 0|||T||||||REQUIRED|||-NONE-|||0
A 1 1|||T||||||REQUIRED|||-NONE-|||0

S is The , the ab ab ab , The cat a
A 11 11|||T||||||REQUIRED|||-NONE-|||0
A 5 7|||T|||is|||REQUIRED|||-NONE-|||1
A 6 8|||T||||||REQUIRED|||-NONE-|||1
A 10 11|||T|||Cat|||REQUIRED|||-NONE-|||1
A 4 6|||T|||ab a|||REQUIRED|||-NONE-|||1
A 6 6|||T|||of|||REQUIRED|||-NONE-|||2
A 7 8|||T|||of|||REQUIRED|||-NONE-|||2
A 3 4|||T|||ab the|||REQUIRED|||-NONE-|||2
A 3 4|||T||||||REQUIRED|||-NONE-|||2

S Cat , b . the , a is a The a
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||0

S Cat , ab . of ab a a b The of .
A 0 1|||T|||Cat ab|||REQUIRED|||-NONE-|||0
A 4 5|||T||||||REQUIRED|||-NONE-|||0
A 1 2|||T|||a ab|||REQUIRED|||-NONE-|||0
A 11 12|||T|||is Cat|||REQUIRED|||-NONE-|||1
A 10 12|||T||||||REQUIRED|||-NONE-|||2
A 4 6|||T||||||REQUIRED|||-NONE-|||2
A 7 8|||T||||||REQUIRED|||-NONE-|||2

S The is The a Cat , the of
A 2 2|||T||||||REQUIRED|||-NONE-|||0

S the cat the is of The . of
A 7 7|||T||||||REQUIRED|||-NONE-|||0
A 7 7|||T|||a|||REQUIRED|||-NONE-|||0

S the , a ab The ab , the The b of a
A 6 6|||T|||b the|||REQUIRED|||-NONE-|||0

S cat cat the Cat ab cat the the .
A 3 5|||T||||||REQUIRED|||-NONE-|||0
A 9 9|||T|||Cat|||REQUIRED|||-NONE-|||1
A 9 9|||T||||||REQUIRED|||-NONE-|||1
A 0 0|||T||||||REQUIRED|||-NONE-|||1
A 2 2|||T|||of|||REQUIRED|||-NONE-|||1

S ab a a cat Cat ab a ab is
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||0
A 8 8|||T||||||REQUIRED|||-NONE-|||1
A 3 4|||T||||||REQUIRED|||-NONE-|||2
A 3 5|||T|||The|||REQUIRED|||-NONE-|||2
A 7 9|||T||||||REQUIRED|||-NONE-|||2
A 5 7|||T|||The a|||REQUIRED|||-NONE-|||2

S the a a a a The
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||0
A 5 5|||T|||a ab|||REQUIRED|||-NONE-|||1
A 3 5|||T|||of|||REQUIRED|||-NONE-|||1
A 4 4|||T|||Cat cat|||REQUIRED|||-NONE-|||1
A 3 5|||T|||is|||REQUIRED|||-NONE-|||1
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||2

S a of is
A 1 3|||T||||||REQUIRED|||-NONE-|||0
A 1 3|||T|||a|||REQUIRED|||-NONE-|||0
A 1 1|||T|||, is|||REQUIRED|||-NONE-|||0
A 0 1|||T||||||REQUIRED|||-NONE-|||0

S of Cat a a ab . the . Cat b a a
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||0

S b . the the Cat b of a b ab ab b
A 0 0|||T|||b a|||REQUIRED|||-NONE-|||0
A 3 5|||T|||b|||REQUIRED|||-NONE-|||0
A 10 11|||T|||is ab|||REQUIRED|||-NONE-|||0
A 5 7|||T|||.|||REQUIRED|||-NONE-|||0
A 7 8|||T|||a cat|||REQUIRED|||-NONE-|||1
A 5 6|||T||||||REQUIRED|||-NONE-|||2
A 12 12|||T||||||REQUIRED|||-NONE-|||2
A 4 4|||T||||||REQUIRED|||-NONE-|||2

S The b a Cat
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||0
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||1

S . a . a The a
A 1 3|||T||||||REQUIRED|||-NONE-|||0
A 1 3|||T|||the ,|||REQUIRED|||-NONE-|||1
A 4 5|||T|||a|||REQUIRED|||-NONE-|||1
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||2

S is The of is
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||0

S ab
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||0
A 1 1|||T||||||REQUIRED|||-NONE-|||1
A 1 1|||T||||||REQUIRED|||-NONE-|||1
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||2

S is , Cat ab the cat a of a
A 7 9|||T|||is|||REQUIRED|||-NONE-|||0

S a a of a Cat a a is a the the
A 11 11|||T|||of a|||REQUIRED|||-NONE-|||0
A 6 7|||T||||||REQUIRED|||-NONE-|||0
A 7 7|||T|||is|||REQUIRED|||-NONE-|||0
A 3 4|||T||||||REQUIRED|||-NONE-|||0
A 6 8|||T||||||REQUIRED|||-NONE-|||1
A 8 10|||T|||is ab|||REQUIRED|||-NONE-|||1
A 6 6|||T||||||REQUIRED|||-NONE-|||1

S is , a
A 1 2|||T|||of|||REQUIRED|||-NONE-|||0
A 1 2|||T||||||REQUIRED|||-NONE-|||0
A 3 3|||T|||ab Cat|||REQUIRED|||-NONE-|||1
A 1 3|||T|||is the|||REQUIRED|||-NONE-|||1
A 1 1|||T|||of|||REQUIRED|||-NONE-|||1
A 3 3|||T|||cat The|||REQUIRED|||-NONE-|||2

S . , . b
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||0

S The of cat ab the of ab The
A 1 1|||T|||b is|||REQUIRED|||-NONE-|||0
A 8 8|||T|||ab Cat|||REQUIRED|||-NONE-|||0
A 6 6|||T|||cat|||REQUIRED|||-NONE-|||1
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||2

S a a The is ab
A 0 1|||T|||,|||REQUIRED|||-NONE-|||0
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||1

S a , of b ab b cat
A 1 2|||T||||||REQUIRED|||-NONE-|||0
A 2 4|||T|||cat|||REQUIRED|||-NONE-|||0

S Cat a ab . .
A 0 2|||T|||Cat Cat|||REQUIRED|||-NONE-|||0
A 1 1|||T||||||REQUIRED|||-NONE-|||1
A 5 5|||T||||||REQUIRED|||-NONE-|||2

S a
A 0 0|||T||||||REQUIRED|||-NONE-|||0
A 1 1|||T||||||REQUIRED|||-NONE-|||0
A 1 1|||T|||, b|||REQUIRED|||-NONE-|||0

S of the is a Cat a a b
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||0

S . Cat
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||0

S . Cat ab Cat b of
A 0 1|||T||||||REQUIRED|||-NONE-|||0
A 6 6|||T|||the Cat|||REQUIRED|||-NONE-|||0
A 0 2|||T|||a|||REQUIRED|||-NONE-|||0
A 3 3|||T|||the|||REQUIRED|||-NONE-|||0
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||1

S a The cat b a
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||0
A 5 5|||T|||a ab|||REQUIRED|||-NONE-|||1
A 2 3|||T|||,|||REQUIRED|||-NONE-|||1

S , ab
A 1 2|||T|||is b|||REQUIRED|||-NONE-|||0
A 1 1|||T|||the is|||REQUIRED|||-NONE-|||0
A 0 1|||T||||||REQUIRED|||-NONE-|||0
A 2 2|||T||||||REQUIRED|||-NONE-|||0

S , Cat ,
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||0

S a cat ab Cat the
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||0

S , , is a b b
A 2 3|||T|||a ab|||REQUIRED|||-NONE-|||0
A 5 6|||T|||. .|||REQUIRED|||-NONE-|||0

S a b the
A 1 2|||T|||a .|||REQUIRED|||-NONE-|||0
A 3 3|||T|||is The|||REQUIRED|||-NONE-|||0
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||1

S . , . Cat of ab a , . is . .
A 3 5|||T||||||REQUIRED|||-NONE-|||0
A 5 5|||T|||a The|||REQUIRED|||-NONE-|||0
A 4 4|||T|||cat b|||REQUIRED|||-NONE-|||0

S Cat b is a of is cat b
A 3 5|||T||||||REQUIRED|||-NONE-|||0

S a
A 0 0|||T|||is .|||REQUIRED|||-NONE-|||0
A 0 0|||T|||of is|||REQUIRED|||-NONE-|||0
A 1 1|||T|||ab is|||REQUIRED|||-NONE-|||1
A 1 1|||T||||||REQUIRED|||-NONE-|||2
A 1 1|||T|||Cat ab|||REQUIRED|||-NONE-|||2
A 0 0|||T|||Cat cat|||REQUIRED|||-NONE-|||2

S Cat a b of , , Cat is The The
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||0

S is b The cat a the b
A 4 6|||T|||a|||REQUIRED|||-NONE-|||0
A 2 2|||T|||a a|||REQUIRED|||-NONE-|||1
A 1 3|||T|||is|||REQUIRED|||-NONE-|||1
A 5 6|||T|||Cat|||REQUIRED|||-NONE-|||1
A 1 3|||T|||Cat|||REQUIRED|||-NONE-|||1

S b is cat a cat b , b
A 5 7|||T|||ab a|||REQUIRED|||-NONE-|||0
A 3 4|||T||||||REQUIRED|||-NONE-|||0
A 6 8|||T|||of .|||REQUIRED|||-NONE-|||0
A 2 4|||T||||||REQUIRED|||-NONE-|||0
A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||1

