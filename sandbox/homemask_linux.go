//go:build linux

package sandbox

// buildHomeLayers makes HOME's layer a view built by construction (see
// nshelper.Layer.Built): the agent finds in HOME only its CLIs' config,
// git's settings, the toolchains, what the loop file adds and the loop's
// own folders, each from the real HOME, and what it wrote there itself in
// earlier runs (the layer). Nothing else of the real HOME is in the view,
// whenever it was made: no listing of HOME is involved.
func (q *Policy) buildHomeLayers(layers []Layer, path string) {
	home, err := canonical(lookupEnv(q.viewEnv(), "HOME"))
	if err != nil || home == "/" {
		return
	}
	for i, l := range layers {
		if l.Target != home {
			continue
		}
		keep := q.homeKeep(home, path)
		for _, o := range layers {
			if o.Target != home && Within(o.Target, home) {
				keep = append(keep, o.Target) // its mount point
			}
		}
		layers[i].Built, layers[i].Keep = true, keep
		q.maskedHome, q.keptHome = home, keep
	}
}

// manifest is the view of the box's checks with env: the manifest of the
// box's options, with git's and the toolchains' settings of HOME.
func (b *CheckBox) manifest(env []string) Manifest {
	v := b.opts.View
	v.Env = env
	v.HomeKeep = append(append([]string(nil), v.HomeKeep...), checkHomeSeeds...)
	return BuildManifest(v)
}

// buildHome makes the check's throw-away layer over HOME a view built by
// construction: only what its manifest, its tree, its caches and its
// views keep of the real HOME is in it.
func (b *CheckBox) buildHome(layers []Layer, m Manifest, env []string) {
	home, err := canonical(lookupEnv(env, "HOME"))
	if err != nil || home == "/" {
		return
	}
	var keep []string
	for _, e := range m {
		if e.How != Fresh && Within(e.Path, home) && e.Path != home {
			keep = append(keep, e.Path)
		}
	}
	more := append(append(append([]string{b.tree, b.around}, b.targets...), b.views...), existing(cacheDirs(env))...)
	for _, k := range more {
		if Within(k, home) && k != home {
			keep = append(keep, k)
		}
	}
	for i, l := range layers {
		if l.Target == home && l.Target != b.tree {
			layers[i].Built, layers[i].Keep = true, keep
		}
	}
}

// InView says whether the box's checks see path (or are kept from it on
// purpose: the hidden folders, their own fresh ones): the box's manifest
// for env, the tree, its views, the caches' and other layers' trees (HOME
// only where the manifest keeps it). With the sandbox off every path is.
func (b *CheckBox) InView(path string, env []string) bool {
	if b.opts.Kind == Off {
		return true
	}
	home, _ := canonical(lookupEnv(env, "HOME"))
	shown := append([]string{b.tree}, b.views...)
	for _, t := range append(b.targets, existing(cacheDirs(env))...) {
		if t != home {
			shown = append(shown, t)
		}
	}
	return inManifestView(path, b.manifest(env), shown, b.hide)
}
