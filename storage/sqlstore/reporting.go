package sqlstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/kmkit/kmkit/reporting"
)

// ReportingStore is the reporting.Store of a DB. Each element is one row of
// reporting_elements holding its JSON, keyed by tenant and its position in the order
// reporting.CompareElements defines (computed when the tenant's elements are put), so
// that a page is one indexed range read. Every key and every query carries the tenant.
type ReportingStore struct{ db *DB }

// Reporting returns the DB's reporting.Store.
func (db *DB) Reporting() *ReportingStore { return &ReportingStore{db: db} }

// PutTenant replaces the elements of tenant in one transaction, or returns the
// reporting.Validate error of elements and changes nothing.
//
// The put takes part in the import claim of km_imports (source "reporting/" and the
// tenant): it locks that row first and records the SHA-256 of the elements, so that
// replicas starting at once with the same elements write them once and the others find
// them there, and a put of unchanged elements writes nothing.
func (s *ReportingStore) PutTenant(tenant string, elements []reporting.Element) error {
	return s.PutTenantContext(context.Background(), tenant, elements)
}

// PutTenantContext is PutTenant with a context.
func (s *ReportingStore) PutTenantContext(ctx context.Context, tenant string, elements []reporting.Element) error {
	if err := reporting.Validate(elements); err != nil {
		return err
	}
	sorted := make([]*reporting.Element, len(elements))
	for i := range elements {
		sorted[i] = &elements[i]
	}
	slices.SortStableFunc(sorted, reporting.CompareElements)
	docs := make([][]byte, len(sorted))
	for i, e := range sorted {
		b, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("sqlstore: element %s: %w", e.ID, err)
		}
		docs[i] = b
	}
	sum := sha256.New()
	for _, doc := range docs {
		sum.Write(doc)
		sum.Write([]byte{'\n'})
	}
	digest := hex.EncodeToString(sum.Sum(nil))
	source := reportingSource + tenant
	d := s.db.d
	return s.db.tx(ctx, func(tx *sql.Tx) error {
		var current string
		if err := tx.QueryRowContext(ctx, d.rebind(claimImport), source).Scan(&current); err != nil {
			return err
		}
		if current == digest {
			return nil
		}
		if _, err := tx.ExecContext(ctx, d.rebind(`DELETE FROM reporting_elements WHERE tenant = ?`), tenant); err != nil {
			return err
		}
		stmt, err := tx.PrepareContext(ctx, d.rebind(`INSERT INTO reporting_elements (tenant, pos, facet_name, element) VALUES (?, ?, ?, ?)`))
		if err != nil {
			return err
		}
		defer stmt.Close()
		for i, e := range sorted {
			if _, err := stmt.ExecContext(ctx, tenant, i, e.FacetName, string(docs[i])); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, d.rebind(recordImport), digest, len(sorted), "", source)
		return err
	})
}

// reportingSource prefixes the tenant in the km_imports source of its elements; no KM table
// name holds a '/'.
const reportingSource = "reporting/"

// Elements implements reporting.Store. The page and the total come from one statement,
// so they agree even while PutTenant replaces the tenant.
func (s *ReportingStore) Elements(ctx context.Context, tenant string, q reporting.ElementQuery) ([]reporting.Element, int, error) {
	where, args := ` WHERE tenant = ?`, []any{tenant}
	if q.FacetName != "" {
		where += ` AND facet_name = ?`
		args = append(args, q.FacetName)
	}
	d := s.db.d
	page := []reporting.Element{}
	total := -1
	if q.Take > 0 {
		rows, err := s.db.sql.QueryContext(ctx, d.rebind(`SELECT element, count(*) OVER () FROM reporting_elements`+where+
			` ORDER BY pos LIMIT ? OFFSET ?`), append(args, q.Take, q.Skip)...)
		if err != nil {
			return nil, 0, err
		}
		defer rows.Close()
		for rows.Next() {
			var doc string
			if err := rows.Scan(&doc, &total); err != nil {
				return nil, 0, err
			}
			var e reporting.Element
			if err := json.Unmarshal([]byte(doc), &e); err != nil {
				return nil, 0, fmt.Errorf("sqlstore: stored element of tenant %s: %w", tenant, err)
			}
			page = append(page, e)
		}
		if err := rows.Err(); err != nil {
			return nil, 0, err
		}
	}
	if total < 0 { // no row to carry the total
		if err := s.db.sql.QueryRowContext(ctx, d.rebind(`SELECT count(*) FROM reporting_elements`+where), args...).Scan(&total); err != nil {
			return nil, 0, err
		}
	}
	return page, total, nil
}

// Facets implements reporting.Store, with the page and the total from one statement.
func (s *ReportingStore) Facets(ctx context.Context, tenant string, skip, take int) ([]reporting.Facet, int, error) {
	d := s.db.d
	page := []reporting.Facet{}
	total := -1
	if take > 0 {
		rows, err := s.db.sql.QueryContext(ctx, d.rebind(`SELECT facet_name, count(*) OVER () FROM
			(SELECT DISTINCT facet_name FROM reporting_elements WHERE tenant = ?) f
			ORDER BY facet_name LIMIT ? OFFSET ?`), tenant, take, skip)
		if err != nil {
			return nil, 0, err
		}
		defer rows.Close()
		for rows.Next() {
			var f reporting.Facet
			if err := rows.Scan(&f.Name, &total); err != nil {
				return nil, 0, err
			}
			page = append(page, f)
		}
		if err := rows.Err(); err != nil {
			return nil, 0, err
		}
	}
	if total < 0 {
		if err := s.db.sql.QueryRowContext(ctx, d.rebind(`SELECT count(DISTINCT facet_name) FROM reporting_elements WHERE tenant = ?`),
			tenant).Scan(&total); err != nil {
			return nil, 0, err
		}
	}
	return page, total, nil
}

var _ reporting.Store = (*ReportingStore)(nil)
