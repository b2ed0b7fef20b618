package fleet

import (
	"context"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Custom search attributes a loop workflow keeps up to date after each
// step, when they are registered on the namespace: `looprinter list` reads
// them from visibility instead of querying every running loop. Register
// them on a real cluster with
//
//	temporal operator search-attribute create --namespace NS \
//	  --name LooprinterPhase --type Keyword ...
//
// (docs/fleet.md lists them all). Changing a name breaks listing of loops
// already running.
const (
	SAShape         = "LooprinterShape"
	SAPhase         = "LooprinterPhase"
	SACycle         = "LooprinterCycle"
	SASteps         = "LooprinterSteps"
	SACycleGate     = "LooprinterCycleGate"
	SAObjectiveGate = "LooprinterObjectiveGate"
	SACostUSD       = "LooprinterCostUSD"
	SAOutcome       = "LooprinterOutcome"
	SAPaused        = "LooprinterPaused"
)

// SearchAttributes are the custom search attributes and their types.
var SearchAttributes = map[string]enumspb.IndexedValueType{
	SAShape:         enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	SAPhase:         enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	SACycle:         enumspb.INDEXED_VALUE_TYPE_INT,
	SASteps:         enumspb.INDEXED_VALUE_TYPE_INT,
	SACycleGate:     enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	SAObjectiveGate: enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	SACostUSD:       enumspb.INDEXED_VALUE_TYPE_DOUBLE,
	SAOutcome:       enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	SAPaused:        enumspb.INDEXED_VALUE_TYPE_BOOL,
}

// versionSearchAttributes is the workflow.GetVersion change id of the
// search attribute upserts: histories recorded before them replay as they ran.
const versionSearchAttributes = "search-attributes"

var (
	saShape         = temporal.NewSearchAttributeKeyKeyword(SAShape)
	saPhase         = temporal.NewSearchAttributeKeyKeyword(SAPhase)
	saCycle         = temporal.NewSearchAttributeKeyInt64(SACycle)
	saSteps         = temporal.NewSearchAttributeKeyInt64(SASteps)
	saCycleGate     = temporal.NewSearchAttributeKeyKeyword(SACycleGate)
	saObjectiveGate = temporal.NewSearchAttributeKeyKeyword(SAObjectiveGate)
	saCostUSD       = temporal.NewSearchAttributeKeyFloat64(SACostUSD)
	saOutcome       = temporal.NewSearchAttributeKeyKeyword(SAOutcome)
	saPaused        = temporal.NewSearchAttributeKeyBool(SAPaused)
)

// upserter returns the workflow's search attribute upsert: a no-op unless
// the loop was submitted to a namespace where they are registered (an
// upsert of an unregistered attribute fails the workflow task, and so the
// loop) and the workflow runs a version that upserts.
func upserter(ctx workflow.Context, in LoopInput) func(s Status) {
	if !in.SearchAttributes || workflow.GetVersion(ctx, versionSearchAttributes, workflow.DefaultVersion, 1) != 1 {
		return func(Status) {}
	}
	return func(s Status) {
		_ = workflow.UpsertTypedSearchAttributes(ctx,
			saShape.ValueSet(s.Shape), saPhase.ValueSet(s.Phase), saCycle.ValueSet(int64(s.Cycle)), saSteps.ValueSet(int64(s.Steps)),
			saCycleGate.ValueSet(s.CycleGate), saObjectiveGate.ValueSet(s.ObjectiveGate),
			saCostUSD.ValueSet(s.CostUSD), saOutcome.ValueSet(s.Outcome), saPaused.ValueSet(s.Paused))
	}
}

// SearchAttributesRegistered says whether the namespace has every custom
// search attribute with its type. An error (a server or account that does
// not let this client list them) counts as no.
func SearchAttributesRegistered(ctx context.Context, c client.Client, namespace string) bool {
	resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return false
	}
	have := resp.GetCustomAttributes()
	for name, typ := range SearchAttributes {
		if t, ok := have[name]; !ok || t != typ {
			return false
		}
	}
	return true
}

// RegisterSearchAttributes adds the custom search attributes to a namespace
// (the dev server does it when it starts; a real cluster's operator does it
// once, docs/fleet.md).
func RegisterSearchAttributes(ctx context.Context, c client.Client, namespace string) error {
	_, err := c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{Namespace: namespace, SearchAttributes: SearchAttributes})
	return err
}
