"""A person at the table: the web face's side of human play (docs/decisions.md: decision 21).

A signed-in person (a course's student or organizer) takes a seat in a practice match from the
browser. The web face asks the referee for the seat (:mod:`.tables`: ``TableService``), then
plays it as one more remote seat (:mod:`.seat`: the SDK's ``Connection`` with an ``AsyncBot``
whose ``choose`` awaits the person's click), so the referee, its clock and its record do not
change. The person's page and its event stream (:mod:`.routes`) show that seat's own view only;
:mod:`.registry` bounds the matches this web face plays (per person and in all); :mod:`.words`
says the actions and the seats in words; :mod:`.form` reads the form that starts a match.
docs/web.md ("Playing a game yourself") is what a user sees.
"""
