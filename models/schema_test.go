package models

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm/schema"
)

// allModels are the GORM models whose tables the migrations create.
var allModels = []any{&User{}, &APIKey{}, &Page{}, &PageRevision{}, &Exchange{}, &Message{}, &ProposalRejection{},
	&AdminAudit{}, &Settings{}, &RetentionRun{}, &ServerSecret{}, &SubRun{}, &Identity{}, &Share{}, &SharedCopy{}, &ExchangeRead{}, &ToolPolicy{}, &Blob{}, &File{}, &MessageAttachment{}, &FileHold{}, &BlobDeletion{},
	&Project{}, &ProjectFile{}, &AccountInstructions{}, &Memory{}, &InstructionText{},
	&LLMConnection{}, &LLMModel{}, &UsageDaily{}, &TokenBudget{}, &ModelFavourite{}}

// TestSchemaMatchesModels proves the migrated schema and the GORM models
// agree: every field has a column of a compatible type and nullability, and
// every column is mapped by a field.
func TestSchemaMatchesModels(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		for _, m := range allModels {
			for _, p := range schemaProblems(t, s, m) {
				t.Error(p)
			}
		}
	})
}

// TestSchemaCheckerCatchesMismatches keeps the checker honest: a model that
// disagrees with the messages table in each way it checks is reported.
func TestSchemaCheckerCatchesMismatches(t *testing.T) {
	s := newSQLite(t, Options{})
	got := strings.Join(schemaProblems(t, s, &badMessage{}), "\n")
	for _, want := range []string{
		"table messages, column seq: field Seq is string (want TEXT), column is INTEGER",
		"table messages, column role: field Role is *string, so the column must be nullable, but it is NOT NULL",
		"table messages, column content: field Content is int64 (want INTEGER or BIGINT), column is TEXT",
		"table messages, column feedback: field Feedback is int64 and NOT NULL, but the column is nullable",
		"table messages, column no_such_thing: field NoSuchThing has no column",
		"table messages, column created_at: no field maps it",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("checker did not report %q; it reported:\n%s", want, got)
		}
	}
}

// badMessage disagrees with the messages table on purpose.
type badMessage struct {
	ID              int64  `gorm:"primaryKey"`
	ExchangeID      int64  `gorm:"not null"`
	Seq             string `gorm:"not null"`
	Role            *string
	Content         int64 `gorm:"not null"`
	AgentType       *string
	AgentResponse   *AgentResponse `gorm:"type:text;serializer:json"`
	Tool            *ToolFields    `gorm:"type:text;serializer:json"`
	Feedback        int64          `gorm:"not null"`
	FeedbackComment *string
	NoSuchThing     *string
}

func (badMessage) TableName() string { return "messages" }

// schemaProblems compares one model with its migrated table.
func schemaProblems(t *testing.T, s *Store, model any) []string {
	t.Helper()
	sch, err := schema.Parse(model, &sync.Map{}, s.db.NamingStrategy)
	if err != nil {
		t.Fatalf("parse %T: %v", model, err)
	}
	cols, err := s.db.Migrator().ColumnTypes(sch.Table)
	if err != nil {
		t.Fatalf("column types of %s: %v", sch.Table, err)
	}
	if len(cols) == 0 {
		return []string{fmt.Sprintf("table %s: no such table (or no columns)", sch.Table)}
	}
	var problems []string
	report := func(column, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("table %s, column %s: ", sch.Table, column)+fmt.Sprintf(format, args...))
	}
	byName := map[string]int{}
	for i, c := range cols {
		byName[c.Name()] = i
	}
	for _, f := range sch.Fields {
		if f.DBName == "" {
			continue // not persisted
		}
		i, ok := byName[f.DBName]
		if !ok {
			report(f.DBName, "field %s has no column", f.Name)
			continue
		}
		c := cols[i]
		dbType := strings.ToUpper(c.DatabaseTypeName())
		want := compatibleTypes(f, s.Dialect())
		if !slices.Contains(want, dbType) {
			report(f.DBName, "field %s is %s (want %s), column is %s",
				f.Name, f.FieldType, strings.Join(want, " or "), dbType)
		}
		nullable, known := c.Nullable()
		if !known {
			report(f.DBName, "the database does not say whether the column is nullable")
			continue
		}
		if f.PrimaryKey {
			if pk, _ := c.PrimaryKey(); !pk {
				report(f.DBName, "field %s is the primary key, the column is not", f.Name)
			}
			continue // a primary key is never NULL, whatever the DDL spells
		}
		isPtr := f.FieldType.Kind() == reflect.Pointer
		switch {
		case isPtr && !nullable:
			report(f.DBName, "field %s is %s, so the column must be nullable, but it is NOT NULL", f.Name, f.FieldType)
		case !isPtr && nullable:
			// Reading NULL into a non-pointer field fails, so the column must
			// refuse it.
			report(f.DBName, "field %s is %s and NOT NULL, but the column is nullable", f.Name, f.FieldType)
		case f.NotNull && nullable:
			report(f.DBName, "field %s is tagged not null, but the column is nullable", f.Name)
		}
	}
	for _, c := range cols {
		if sch.LookUpField(c.Name()) != nil {
			continue
		}
		if s.Dialect() == "postgres" && (sch.Table == "messages" && c.Name() == "content_tsv" || sch.Table == "exchanges" && c.Name() == "title_tsv") {
			continue // generated full-text columns, never read or written by GORM
		}
		report(c.Name(), "no field maps it (column type %s)", strings.ToUpper(c.DatabaseTypeName()))
	}
	return problems
}

// compatibleTypes lists the column types that can hold a field, as each
// dialect names them.
func compatibleTypes(f *schema.Field, dialect string) []string {
	pg := dialect == "postgres"
	if f.Serializer != nil || f.TagSettings["SERIALIZER"] != "" {
		return []string{"TEXT"} // JSON kept as text, readable in both dialects
	}
	typ := f.FieldType
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ == reflect.TypeOf(time.Time{}) {
		if pg {
			return []string{"TIMESTAMPTZ"} // with the zone: a plain TIMESTAMP would shift times
		}
		return []string{"DATETIME"} // what mattn/go-sqlite3 reads back as time.Time
	}
	switch typ.Kind() {
	case reflect.Bool:
		if pg {
			return []string{"BOOL", "BOOLEAN"}
		}
		return []string{"BOOLEAN"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if pg {
			if typ.Size() == 8 {
				return []string{"INT8", "BIGINT"} // a 32-bit column would overflow an int64
			}
			return []string{"INT8", "BIGINT", "INT4", "INTEGER", "INT2", "SMALLINT"}
		}
		return []string{"INTEGER", "BIGINT"}
	case reflect.String:
		return []string{"TEXT"}
	case reflect.Float64:
		if pg {
			return []string{"FLOAT8", "DOUBLE PRECISION"}
		}
		return []string{"REAL"}
	case reflect.Slice:
		if typ.Elem().Kind() == reflect.Uint8 { // []byte
			if pg {
				return []string{"BYTEA"}
			}
			return []string{"BLOB"}
		}
	}
	return []string{"(no known column type for " + typ.String() + ")"}
}
