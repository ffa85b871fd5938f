package sqlstore

// RaceEnabled is raceEnabled for the package's external tests.
const RaceEnabled = raceEnabled
