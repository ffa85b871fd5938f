// Package memory holds in-memory implementations of every kmkit store, safe for concurrent use.
//
// # Opening
//
// The memory backend is opened the way package sqlstore is, so that a host switches
// backends by changing only how it opens the DB: New returns a DB (sqlstore.Open returns a
// sqlstore.DB), and the DB hands out its stores.
//
//	db := memory.New()                        // db, err := sqlstore.Open(ctx, dsn)
//	kmStore := db.KM()                        // a KMStore with no KMs yet
//	err := kmStore.Import(ctx, os.DirFS(dir)) // models/*.yaml and data/<source>.csv
//	scimStore := db.SCIM()                    // users and groups
//	reportingStore := db.Reporting()          // reporting elements per tenant
//
// KMStore.Import and KMStore.PutModel have the signatures and meaning of sqlstore's: Import
// loads a data directory and registers its KMs, PutModel adds or replaces one KM whose
// sources the store holds. Data that come from no directory (generated, or read by the
// host) enter with KMStore.PutTable, then PutModel; in sqlstore they are tables of the
// database (sqlstore.KMStore.ImportTables, or the host's own). Import and PutModel refuse
// data whose relationship target holds a value twice (km.ErrDuplicateTarget), and leave
// the store as it was; PutTable, with no error to return, cannot, and a query joining
// through such a table put under a KM answers km.DuplicateTargetError (a 409). KMStore.Warm, once the data
// are in place, builds what the first queries would otherwise build (relationship
// indexes, the executors' scratch memory), so that the first heavy request after a load
// costs what later ones do.
//
// Where the backends differ, as memory is no database: each KMStore of a DB holds its own
// tables (a KM store of a sqlstore.DB reads the database's), so that importing into a new
// one, as a reload does, never changes one serving requests; Import reads every file each
// time (sqlstore skips the sources it imported unchanged before) and changes nothing when
// it fails; and SCIM and Reporting return the same store on every call, since the data
// live in it.
package memory
