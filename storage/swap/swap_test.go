package swap_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/kmkit/kmkit/km"
	"github.com/kmkit/kmkit/storage/memory"
	"github.com/kmkit/kmkit/storage/swap"
)

func load(t *testing.T) *memory.KMStore {
	t.Helper()
	s := memory.New().KM()
	err := s.Import(context.Background(), os.DirFS("../../km/testdata/shop"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// named is a store whose only model is called name.
type named struct {
	km.Store
	name string
}

func (n named) Models(context.Context) ([]*km.KnowledgeModel, error) {
	return []*km.KnowledgeModel{{ID: "m", Name: n.name}}, nil
}

func name(t *testing.T, s km.Store, ctx context.Context) string {
	t.Helper()
	ms, err := s.Models(ctx)
	if err != nil || len(ms) != 1 {
		t.Fatalf("Models: %v %v", ms, err)
	}
	return ms[0].Name
}

func TestPinnedRequestsKeepTheirStore(t *testing.T) {
	live := swap.NewKMStore(named{name: "old"})
	pinned := live.Pin(context.Background())
	if old := live.Swap(named{name: "new"}); old.(named).name != "old" {
		t.Fatalf("Swap returned %v", old)
	}
	if got := name(t, live, pinned); got != "old" {
		t.Errorf("pinned call reached %q, want old", got)
	}
	if got := name(t, live, context.Background()); got != "new" {
		t.Errorf("unpinned call reached %q, want new", got)
	}
	if got := name(t, live, live.Pin(context.Background())); got != "new" {
		t.Errorf("a new pin reached %q, want new", got)
	}
	// Pins of two KMStores do not interfere.
	other := swap.NewKMStore(named{name: "other"})
	if got := name(t, other, pinned); got != "other" {
		t.Errorf("another KMStore reached %q through a foreign pin", got)
	}
}

func TestSummarizeFollowsTheStore(t *testing.T) {
	live := swap.NewKMStore(named{name: "x"})
	if _, err := live.Summarize(context.Background(), nil); !errors.Is(err, km.ErrUnsupported) {
		t.Errorf("Summarize on a store without it: %v, want km.ErrUnsupported", err)
	}
	mem := load(t)
	live.Swap(mem)
	ctx := context.Background()
	m, err := live.Model(ctx, "shop")
	if err != nil {
		t.Fatal(err)
	}
	rec := m.Records[0]
	r := &km.PlanRequest{Record: rec.ID}
	r.Fields = []string{rec.Fields[0].ID}
	r.PageSize = 1
	p, err := km.NewPlan(m, r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := live.Summarize(ctx, p); err != nil {
		t.Errorf("Summarize through the memory store: %v", err)
	}
}

// TestHandlerPinsWhileSwapping swaps stores while requests run: every request sees one
// store from its first call to its last.
func TestHandlerPinsWhileSwapping(t *testing.T) {
	live := swap.NewKMStore(named{name: "0"})
	h := live.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first := name(t, live, r.Context())
		for range 50 {
			if got := name(t, live, r.Context()); got != first {
				t.Errorf("one request saw %q then %q", first, got)
				return
			}
		}
	}))
	var swapper, clients sync.WaitGroup
	stop := make(chan struct{})
	swaps := 0
	swapper.Go(func() {
		for i := 1; ; i++ {
			select {
			case <-stop:
				swaps = i
				return
			default:
				live.Swap(named{name: string(rune('0' + i%10))})
			}
		}
	})
	for range 4 {
		clients.Go(func() {
			for range 200 {
				h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
			}
		})
	}
	clients.Wait()
	close(stop)
	swapper.Wait()
	if swaps < 2 {
		t.Errorf("only %d swaps happened during the requests", swaps)
	}
}
