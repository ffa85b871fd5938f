package memory

// DB is an in-memory kmkit database. It hands out its stores the way sqlstore.DB hands out
// those of a database (KM, SCIM, Reporting), so that a host opens either backend the same
// way:
//
//	db := memory.New()                  // or: db, err := sqlstore.Open(ctx, dsn)
//	kmStore := db.KM()
//	err := kmStore.Import(ctx, fsys)    // models/*.yaml and data/*.csv
//	scimStore, reportingStore := db.SCIM(), db.Reporting()
//
// A DB is safe for concurrent use. Its data live as long as the DB: nothing is written
// anywhere.
type DB struct {
	scim      *SCIMStore
	reporting *ReportingStore
}

// New returns an empty in-memory database.
func New() *DB {
	return &DB{scim: newSCIMStore(), reporting: newReportingStore()}
}

// KM returns a new KM store with no models yet (see KMStore.Import and KMStore.PutModel),
// like sqlstore.DB.KM. Unlike the tables of a database, which every KM store of a
// sqlstore.DB reads, the tables of a memory KM store are its own: importing into a new KM
// store (a reload) never changes the data of one serving requests.
func (db *DB) KM() *KMStore { return newKMStore() }

// SCIM returns the DB's scim.Store: every call returns the same store, holding the same
// users, groups and seat limits.
func (db *DB) SCIM() *SCIMStore { return db.scim }

// Reporting returns the DB's reporting.Store: every call returns the same store, holding
// the same tenants.
func (db *DB) Reporting() *ReportingStore { return db.reporting }
