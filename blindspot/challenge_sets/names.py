"""The names the preference protocol's options accept for challenge sets, kept free of imports
so that listing the protocols stays light (:data:`blindspot.challenge_sets.formats.FORMATS`
declares each format under one of :data:`FORMAT_NAMES`)."""

FORMAT_NAMES = ("demetr", "aces")
#: How the preference protocol's tau counts a tie: left out (MENLI) or discordant (ACES).
TIES_POLICIES = ("excluded", "discordant")
